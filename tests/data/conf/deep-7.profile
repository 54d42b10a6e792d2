include deep-8
