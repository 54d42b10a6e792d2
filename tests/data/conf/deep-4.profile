include deep-5
