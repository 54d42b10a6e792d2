network
network deny
network allow
"unterminated
