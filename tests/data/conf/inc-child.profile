# child
memory 128M

cpu-seconds 10
