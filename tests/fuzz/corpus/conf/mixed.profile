memory 256M
cpu-seconds 30 # trailing comment
env-keep "LANG" LC_ALL
include default
