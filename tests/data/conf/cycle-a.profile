include cycle-b
