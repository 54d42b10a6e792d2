/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "cli.h"
int main(int argc, char *argv[]) { return 125; }
