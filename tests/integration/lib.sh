# shell test library
