skillrun-statement/1
name: x
