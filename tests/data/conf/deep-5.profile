include deep-6
