# b
include cycle-a
