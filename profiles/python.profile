# SPDX-License-Identifier: GPL-2.0-or-later
#
# skillrun profile for Python skills: the default profile plus what CPython
# wants.  Limits stay those of the default profile (a profile cannot raise
# them; an administrator can, in skillrun.conf).  See skillrun.profile(5).

include default

# Debian's python3 reads /etc/python3.N/sitecustomize.py when present.
bind-ro-try /etc/python3
bind-ro-try /etc/python3.11
bind-ro-try /etc/python3.12
bind-ro-try /etc/python3.13

# The bundle is read-only: do not try to write __pycache__ next to it.
setenv PYTHONDONTWRITEBYTECODE 1
# Output reaches the captured logs as it is printed, not when a buffer fills.
setenv PYTHONUNBUFFERED 1
