#!/bin/sh
echo 1..0 # SKIP not written yet
