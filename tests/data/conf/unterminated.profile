memory 1M
hostname ok
setenv X "unterminated
