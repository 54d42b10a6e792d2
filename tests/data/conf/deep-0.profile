include deep-1
