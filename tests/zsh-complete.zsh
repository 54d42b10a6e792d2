# SPDX-License-Identifier: GPL-2.0-or-later
#
# zsh -f tests/zsh-complete.zsh DIR OUT LINE...: the words the zsh
# completion _skillrun in DIR offers at the end of each LINE (a command
# line, "skillrun" first; the word being completed is the text after its
# last space, maybe empty), in OUT/1, OUT/2, ..., one a line, sorted.
# An interactive zsh without start-up files in a pseudo-terminal (zsh/zpty)
# loads the completion system, and a compadd wrapper writes down what each
# compadd call would add (compadd -O: what matches the word, as it is
# added).  Exits 2 when zsh cannot do this (no zsh/zpty, no answer).

emulate -L zsh
zmodload zsh/zpty 2>/dev/null || { print -u2 "zsh-complete: no zsh/zpty"; exit 2; }
(( $# >= 2 )) || { print -u2 "usage: zsh-complete.zsh DIR OUT LINE..."; exit 2; }
export ZSH_COMPLETE_DIR=${1:A} ZSH_COMPLETE_OUT=${2:A}
shift 2

cat >$ZSH_COMPLETE_OUT/setup <<'EOF'
PS1= PS2= RPS1= PROMPT_EOL_MARK=
unsetopt zle_bracketed_paste auto_list list_ambiguous beep 2>/dev/null
fpath=($ZSH_COMPLETE_DIR $fpath)
autoload -Uz compinit && compinit -u -D
# -O, -A and -D ask compadd for a list instead of adding: the completion
# system's own filtering, not an offer.
compadd() {
  local -a m s
  zparseopts -E -a s O: A: D:
  if (( $#s )); then builtin compadd "$@"; return; fi
  builtin compadd -O m "$@"
  (( $#m )) && print -rl -- $m >>$ZSH_COMPLETE_OUT/cur
  builtin compadd "$@"
}
_zsh_complete_n=0
_zsh_complete() {
  : >$ZSH_COMPLETE_OUT/cur
  zle complete-word
  (( ++_zsh_complete_n ))
  sort -u $ZSH_COMPLETE_OUT/cur >$ZSH_COMPLETE_OUT/$_zsh_complete_n
  : >$ZSH_COMPLETE_OUT/done.$_zsh_complete_n
}
zle -N _zsh_complete
bindkey '^T' _zsh_complete
# Typed ahead, the lines would be lost when the line editor starts (it
# flushes the terminal's input): they are typed once it has.
_zsh_complete_ready() { : >$ZSH_COMPLETE_OUT/ready; }
zle -N zle-line-init _zsh_complete_ready
EOF

# The caller's TERM is not the pseudo-terminal's, and zsh has no line
# editor at all, so no completion, with TERM=emacs (an old Emacs's shell).
export TERM=dumb
zpty -b z zsh -f -i || exit 2
zpty -w z ". ${(q)ZSH_COMPLETE_OUT}/setup"
zmodload zsh/zselect 2>/dev/null || { print -u2 "zsh-complete: no zsh/zselect"; exit 2; }
# What the terminal shows is read as it comes, and dropped: unread, it
# would fill the pseudo-terminal and stop zsh in mid-line.
wait_for() { # FILE: 0 once it exists, 1 after 10 s without
  local i screen
  for i in {1..1000}; do
    while zpty -r -t z screen; do :; done
    [[ -e $1 ]] && return 0
    zselect -t 1
  done
  return 1
}
wait_for $ZSH_COMPLETE_OUT/ready || {
  print -u2 "zsh-complete: the completion system did not start"
  zpty -d z
  exit 2
}
# Each line typed, completed with ^T, and wiped with ^U.
n=0
for line in "$@"; do
  zpty -w -n z "$line"$'\C-t\C-u'
  (( ++n ))
  wait_for $ZSH_COMPLETE_OUT/done.$n || {
    print -u2 "zsh-complete: no answer for: $line"
    zpty -d z
    exit 2
  }
done
zpty -d z
rm -f $ZSH_COMPLETE_OUT/setup $ZSH_COMPLETE_OUT/cur $ZSH_COMPLETE_OUT/ready $ZSH_COMPLETE_OUT/done.*(N)
exit 0
