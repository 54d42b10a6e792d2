hostname deepest
