/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Trust tiers (skillrun(1) "SIGNED BUNDLES"): the policy's `tiers` and
 * `trust-key` keys name them, signed statements carry one.  Pure.
 */
enum sr_tier {
  SR_TIER_OFFICIAL = 0,
  SR_TIER_VERIFIED,
  SR_TIER_COMMUNITY,
  SR_TIER_TENANT,
  SR__TIER_MAX,
  SR_TIER_UNSIGNED = SR__TIER_MAX, /* no statement: never in a tiers list */
};
#define SR_TIERS_ALL ((1u << SR__TIER_MAX) - 1)

/* "official"... and "unsigned"; NULL for anything else. */
const char *sr_tier_name(enum sr_tier tier);
/* One of the four signing tiers, or -EINVAL ("unsigned" is not one). */
int sr_tier_from_name(const char *s);
