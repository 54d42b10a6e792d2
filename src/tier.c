/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Trust tier names (tier.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "tier.h"

static const char *const tier_names[] = {
    [SR_TIER_OFFICIAL] = "official",   [SR_TIER_VERIFIED] = "verified",
    [SR_TIER_COMMUNITY] = "community", [SR_TIER_TENANT] = "tenant",
    [SR_TIER_UNSIGNED] = "unsigned",
};

const char *sr_tier_name(enum sr_tier tier) {
  /* Unsigned compare: an out-of-range value passed in is refused too. */
  if ((unsigned)tier > SR_TIER_UNSIGNED)
    return NULL;
  return tier_names[tier];
}

int sr_tier_from_name(const char *s) {
  if (!s)
    return -EINVAL;
  for (int i = 0; i < SR__TIER_MAX; i++)
    if (!strcmp(s, tier_names[i]))
      return i;
  return -EINVAL;
}
