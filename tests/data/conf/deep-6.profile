include deep-7
