include deep-2
