include deep-9
