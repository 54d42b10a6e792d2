include default
setenv FOO bar
