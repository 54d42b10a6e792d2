/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "init.h"
