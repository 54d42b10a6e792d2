include deep-3
