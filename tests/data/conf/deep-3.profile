include deep-4
