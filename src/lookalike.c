/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The look-alike form of a SKILL.md key (lookalike.h).
 *
 * Two small tables rather than a library: libunistring (text.h) knows the
 * ignorable characters but not the confusables, and is opened only when it
 * can be; the form must not depend on it.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lookalike.h"
#include "macro.h"
#include "text.h"

/* Default_Ignorable_Code_Point, DerivedCoreProperties.txt (Unicode 15.1). */
static const struct {
  uint32_t lo, hi;
} ignorable[] = {
    {0xAD, 0xAD},       {0x34F, 0x34F},     {0x61C, 0x61C},
    {0x115F, 0x1160},   {0x17B4, 0x17B5},   {0x180B, 0x180F},
    {0x200B, 0x200F},   {0x202A, 0x202E},   {0x2060, 0x206F},
    {0x3164, 0x3164},   {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},
    {0xFFA0, 0xFFA0},   {0xFFF0, 0xFFF8},   {0x1BCA0, 0x1BCA3},
    {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
};

/*
 * confusables.txt (UTS #39, version 10.0): every code point above ASCII
 * that NFKC leaves as it is and whose prototype is a single character
 * among the letters of "sandbox", "metadata" and the sandbox key names
 * (sr_limit_defs and the manifest's own: a-i, k-p, r-u, w-z), '.' or '-'.
 * An uppercase prototype stands for its lowercase letter (keys are compared
 * in lowercase), and so does an uppercase look-alike of 'l' for 'i' (the
 * file gives 'l' for both).  Sorted by code point.
 */
static const struct {
  uint32_t cp;
  char ascii;
} confusable[] = {
    {0xD7, 'x'},    {0x131, 'i'},   {0x184, 'b'},   {0x18D, 'g'},
    {0x196, 'i'},   {0x1A6, 'r'},   {0x1BD, 's'},   {0x1C0, 'l'},
    {0x251, 'a'},   {0x261, 'g'},   {0x263, 'y'},   {0x269, 'i'},
    {0x26A, 'i'},   {0x26F, 'w'},   {0x28B, 'u'},   {0x28F, 'y'},
    {0x2D7, '-'},   {0x391, 'a'},   {0x392, 'b'},   {0x395, 'e'},
    {0x396, 'z'},   {0x397, 'h'},   {0x399, 'i'},   {0x39A, 'k'},
    {0x39C, 'm'},   {0x39D, 'n'},   {0x39F, 'o'},   {0x3A1, 'p'},
    {0x3A4, 't'},   {0x3A5, 'y'},   {0x3A7, 'x'},   {0x3B1, 'a'},
    {0x3B3, 'y'},   {0x3B9, 'i'},   {0x3BF, 'o'},   {0x3C1, 'p'},
    {0x3C3, 'o'},   {0x3C5, 'u'},   {0x3DC, 'f'},   {0x3FA, 'm'},
    {0x405, 's'},   {0x406, 'i'},   {0x410, 'a'},   {0x412, 'b'},
    {0x415, 'e'},   {0x41A, 'k'},   {0x41C, 'm'},   {0x41D, 'h'},
    {0x41E, 'o'},   {0x420, 'p'},   {0x421, 'c'},   {0x422, 't'},
    {0x423, 'y'},   {0x425, 'x'},   {0x42C, 'b'},   {0x430, 'a'},
    {0x433, 'r'},   {0x435, 'e'},   {0x43E, 'o'},   {0x440, 'p'},
    {0x441, 'c'},   {0x443, 'y'},   {0x445, 'x'},   {0x455, 's'},
    {0x456, 'i'},   {0x461, 'w'},   {0x4AE, 'y'},   {0x4AF, 'y'},
    {0x4BB, 'h'},   {0x4BD, 'e'},   {0x4C0, 'i'},   {0x4CF, 'i'},
    {0x501, 'd'},   {0x50C, 'g'},   {0x51C, 'w'},   {0x51D, 'w'},
    {0x54D, 'u'},   {0x54F, 's'},   {0x555, 'o'},   {0x561, 'w'},
    {0x570, 'h'},   {0x578, 'n'},   {0x57C, 'n'},   {0x57D, 'u'},
    {0x581, 'g'},   {0x584, 'f'},   {0x585, 'o'},   {0x5C0, 'l'},
    {0x5D5, 'l'},   {0x5DF, 'l'},   {0x5E1, 'o'},   {0x627, 'l'},
    {0x647, 'o'},   {0x660, '.'},   {0x661, 'l'},   {0x665, 'o'},
    {0x6BE, 'o'},   {0x6C1, 'o'},   {0x6D4, '-'},   {0x6D5, 'o'},
    {0x6F0, '.'},   {0x6F1, 'l'},   {0x6F5, 'o'},   {0x701, '.'},
    {0x702, '.'},   {0x7C0, 'o'},   {0x7CA, 'l'},   {0x966, 'o'},
    {0x9E6, 'o'},   {0xA66, 'o'},   {0xAE6, 'o'},   {0xB20, 'o'},
    {0xB66, 'o'},   {0xBE6, 'o'},   {0xC02, 'o'},   {0xC66, 'o'},
    {0xC82, 'o'},   {0xCE6, 'o'},   {0xD02, 'o'},   {0xD20, 'o'},
    {0xD66, 'o'},   {0xD82, 'o'},   {0xE50, 'o'},   {0xED0, 'o'},
    {0x101D, 'o'},  {0x1040, 'o'},  {0x10E7, 'y'},  {0x10FF, 'o'},
    {0x1200, 'u'},  {0x12D0, 'o'},  {0x13A0, 'd'},  {0x13A1, 'r'},
    {0x13A2, 't'},  {0x13A5, 'i'},  {0x13A9, 'y'},  {0x13AA, 'a'},
    {0x13AC, 'e'},  {0x13B3, 'w'},  {0x13B7, 'm'},  {0x13BB, 'h'},
    {0x13BD, 'y'},  {0x13C0, 'g'},  {0x13C2, 'h'},  {0x13C3, 'z'},
    {0x13CF, 'b'},  {0x13D2, 'r'},  {0x13D4, 'w'},  {0x13D5, 's'},
    {0x13DA, 's'},  {0x13DE, 'l'},  {0x13DF, 'c'},  {0x13E2, 'p'},
    {0x13E6, 'k'},  {0x13E7, 'd'},  {0x13F3, 'g'},  {0x13F4, 'b'},
    {0x144C, 'u'},  {0x146D, 'p'},  {0x146F, 'd'},  {0x14AA, 'l'},
    {0x1541, 'x'},  {0x157C, 'h'},  {0x157D, 'x'},  {0x1587, 'r'},
    {0x15AF, 'b'},  {0x15B4, 'f'},  {0x15C5, 'a'},  {0x15DE, 'd'},
    {0x15EA, 'd'},  {0x15F0, 'm'},  {0x15F7, 'b'},  {0x166D, 'x'},
    {0x166E, 'x'},  {0x16B7, 'x'},  {0x16C1, 'l'},  {0x16D5, 'k'},
    {0x16D6, 'm'},  {0x1D04, 'c'},  {0x1D0F, 'o'},  {0x1D11, 'o'},
    {0x1D1C, 'u'},  {0x1D21, 'w'},  {0x1D22, 'z'},  {0x1D26, 'r'},
    {0x1D83, 'g'},  {0x1D8C, 'y'},  {0x1E9D, 'f'},  {0x1EFF, 'y'},
    {0x2010, '-'},  {0x2012, '-'},  {0x2013, '-'},  {0x2043, '-'},
    {0x212E, 'e'},  {0x2212, '-'},  {0x2223, 'l'},  {0x222A, 'u'},
    {0x22A4, 't'},  {0x22C3, 'u'},  {0x22FF, 'e'},  {0x2373, 'i'},
    {0x2374, 'p'},  {0x237A, 'a'},  {0x23FD, 'l'},  {0x2573, 'x'},
    {0x2796, '-'},  {0x27D9, 't'},  {0x292B, 'x'},  {0x292C, 'x'},
    {0x2A2F, 'x'},  {0x2C85, 'r'},  {0x2C8E, 'h'},  {0x2C92, 'i'},
    {0x2C94, 'k'},  {0x2C98, 'm'},  {0x2C9A, 'n'},  {0x2C9E, 'o'},
    {0x2C9F, 'o'},  {0x2CA2, 'p'},  {0x2CA3, 'p'},  {0x2CA4, 'c'},
    {0x2CA5, 'c'},  {0x2CA6, 't'},  {0x2CA8, 'y'},  {0x2CAC, 'x'},
    {0x2CBA, '-'},  {0x2CD0, 'l'},  {0x2D39, 'e'},  {0x2D4F, 'l'},
    {0x2D54, 'o'},  {0x2D5D, 'x'},  {0x3007, 'o'},  {0xA4D0, 'b'},
    {0xA4D1, 'p'},  {0xA4D2, 'd'},  {0xA4D3, 'd'},  {0xA4D4, 't'},
    {0xA4D6, 'g'},  {0xA4D7, 'k'},  {0xA4DA, 'c'},  {0xA4DC, 'z'},
    {0xA4DD, 'f'},  {0xA4DF, 'm'},  {0xA4E0, 'n'},  {0xA4E1, 'l'},
    {0xA4E2, 's'},  {0xA4E3, 'r'},  {0xA4E7, 'h'},  {0xA4EA, 'w'},
    {0xA4EB, 'x'},  {0xA4EC, 'y'},  {0xA4EE, 'a'},  {0xA4F0, 'e'},
    {0xA4F2, 'l'},  {0xA4F3, 'o'},  {0xA4F4, 'u'},  {0xA4F8, '.'},
    {0xA60E, '.'},  {0xA647, 'i'},  {0xA731, 's'},  {0xA798, 'f'},
    {0xA799, 'f'},  {0xA79F, 'u'},  {0xA7B3, 'x'},  {0xA7B4, 'b'},
    {0xAB32, 'e'},  {0xAB35, 'f'},  {0xAB3D, 'o'},  {0xAB47, 'r'},
    {0xAB48, 'r'},  {0xAB4E, 'u'},  {0xAB52, 'u'},  {0xAB5A, 'y'},
    {0xAB75, 'i'},  {0xAB81, 'r'},  {0xAB83, 'w'},  {0xAB93, 'z'},
    {0xABAA, 's'},  {0xABAF, 'c'},  {0x10282, 'b'}, {0x10286, 'e'},
    {0x10287, 'f'}, {0x1028A, 'l'}, {0x10290, 'x'}, {0x10292, 'o'},
    {0x10295, 'p'}, {0x10296, 's'}, {0x10297, 't'}, {0x102A0, 'a'},
    {0x102A1, 'b'}, {0x102A2, 'c'}, {0x102A5, 'f'}, {0x102AB, 'o'},
    {0x102B0, 'm'}, {0x102B1, 't'}, {0x102B2, 'y'}, {0x102B4, 'x'},
    {0x102CF, 'h'}, {0x102F5, 'z'}, {0x10301, 'b'}, {0x10302, 'c'},
    {0x10309, 'l'}, {0x10311, 'm'}, {0x10315, 't'}, {0x10317, 'x'},
    {0x10320, 'l'}, {0x10322, 'x'}, {0x10404, 'o'}, {0x10415, 'c'},
    {0x1041B, 'l'}, {0x10420, 's'}, {0x1042C, 'o'}, {0x1043D, 'c'},
    {0x10448, 's'}, {0x104B4, 'r'}, {0x104C2, 'o'}, {0x104CE, 'u'},
    {0x104EA, 'o'}, {0x104F6, 'u'}, {0x10513, 'n'}, {0x10516, 'o'},
    {0x10518, 'k'}, {0x1051C, 'c'}, {0x10525, 'f'}, {0x10526, 'l'},
    {0x10527, 'x'}, {0x10A50, '.'}, {0x114D0, 'o'}, {0x1170A, 'w'},
    {0x1170E, 'w'}, {0x1170F, 'w'}, {0x118A2, 'f'}, {0x118A3, 'l'},
    {0x118A4, 'y'}, {0x118A6, 'e'}, {0x118A9, 'z'}, {0x118AE, 'e'},
    {0x118B2, 'l'}, {0x118B5, 'o'}, {0x118B8, 'u'}, {0x118BC, 't'},
    {0x118C1, 's'}, {0x118C2, 'f'}, {0x118C3, 'i'}, {0x118C4, 'z'},
    {0x118C8, 'o'}, {0x118D7, 'o'}, {0x118D8, 'u'}, {0x118DC, 'y'},
    {0x118E0, 'o'}, {0x118E5, 'z'}, {0x118E6, 'w'}, {0x118E9, 'c'},
    {0x118EC, 'x'}, {0x118EF, 'w'}, {0x118F2, 'c'}, {0x16F0A, 't'},
    {0x16F16, 'l'}, {0x16F28, 'l'}, {0x16F35, 'r'}, {0x16F3A, 's'},
    {0x16F40, 'a'}, {0x16F42, 'u'}, {0x16F43, 'y'}, {0x1D16D, '.'},
    {0x1D213, 'f'}, {0x1D216, 'r'}, {0x1D22A, 'l'}, {0x1E8C7, 'l'},
    {0x1F74C, 'c'}, {0x1F768, 't'}

};

static bool is_ignorable(uint32_t c) {
  for (size_t i = 0; i < SR_ARRAY_SIZE(ignorable); i++)
    if (c >= ignorable[i].lo && c <= ignorable[i].hi)
      return true;
  return false;
}

static char confusable_ascii(uint32_t c) {
  size_t lo = 0, hi = SR_ARRAY_SIZE(confusable);

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;

    if (confusable[mid].cp == c)
      return confusable[mid].ascii;
    if (confusable[mid].cp < c)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

/* The code point at s[0..len) and its length in bytes (*n), or 0 bytes for
 * a sequence that is not valid UTF-8. */
static uint32_t decode(const unsigned char *s, size_t len, size_t *n) {
  size_t need = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
  uint32_t c = s[0] & (0x7fu >> need);

  *n = 0;
  if (s[0] < 0xc2 || s[0] > 0xf4 || need > len)
    return 0;
  for (size_t i = 1; i < need; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    c = (c << 6) | (s[i] & 0x3fu);
  }
  *n = need;
  return c;
}

char *sr_lookalike_form(const char *s, size_t len) {
  const unsigned char *u = (const unsigned char *)s;
  char *out = malloc(len + 1);
  size_t o = 0;

  if (!out)
    return NULL;
  for (size_t i = 0; i < len;) {
    size_t n;
    uint32_t c;
    char a;

    if (u[i] < 0x80) {
      if (!sr_text_ascii_isspace(u[i]))
        out[o++] = (char)sr_text_ascii_lower(u[i]);
      i++;
      continue;
    }
    c = decode(u + i, len - i, &n);
    if (n == 0) { /* not UTF-8: kept, byte by byte */
      out[o++] = s[i++];
      continue;
    }
    if (is_ignorable(c)) {
      i += n;
      continue;
    }
    a = confusable_ascii(c);
    if (a) {
      out[o++] = a;
      i += n;
      continue;
    }
    for (size_t j = 0; j < n; j++)
      out[o++] = s[i++];
  }
  out[o] = '\0';
  return out;
}

/* Punctuation outside ASCII, by the blocks that hold it (letters, digits
 * and marks left out): the dots, stops and middle dots of other scripts
 * and of CJK input methods, which confusables.txt does not all give as
 * look-alikes of '.', and their like.  Sorted. */
static const struct {
  uint32_t lo, hi;
} punctuation[] = {
    {0x00a1, 0x00a9}, {0x00ab, 0x00b1}, {0x00b4, 0x00b4}, {0x00b6, 0x00b8},
    {0x00bb, 0x00bb}, {0x00bf, 0x00bf}, {0x00d7, 0x00d7}, {0x00f7, 0x00f7},
    {0x0387, 0x0387}, {0x055c, 0x055f}, {0x0589, 0x0589}, {0x060c, 0x060c},
    {0x061b, 0x061b}, {0x061f, 0x061f}, {0x066a, 0x066d}, {0x06d4, 0x06d4},
    {0x0700, 0x070d}, {0x0964, 0x0965}, {0x0e4f, 0x0e4f}, {0x0e5a, 0x0e5b},
    {0x1360, 0x1368}, {0x166e, 0x166e}, {0x1800, 0x180a}, {0x2010, 0x2027},
    {0x2030, 0x205e}, {0x2200, 0x22ff}, {0x2e00, 0x2e5d}, {0x3001, 0x3003},
    {0x3008, 0x3011}, {0x3014, 0x301f}, {0x3030, 0x3030}, {0x303d, 0x303d},
    {0x30fb, 0x30fb}, {0xa4fe, 0xa4ff}, {0xa60d, 0xa60f}, {0xa6f2, 0xa6f7},
    {0xfe10, 0xfe19}, {0xfe30, 0xfe52}, {0xfe54, 0xfe66}, {0xfe68, 0xfe6b},
    {0xff01, 0xff0f}, {0xff1a, 0xff20}, {0xff3b, 0xff40}, {0xff5b, 0xff65},
};

size_t sr_lookalike_punctuation(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  size_t n;
  uint32_t c;

  if (u[0] < 0x80)
    return 0;
  c = decode(u, strlen(s), &n);
  for (size_t i = 0; n && i < sizeof(punctuation) / sizeof(punctuation[0]); i++)
    if (c >= punctuation[i].lo && c <= punctuation[i].hi)
      return n;
  return 0;
}

uint32_t sr_lookalike_first_non_ascii(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  size_t len = strlen(s);

  for (size_t i = 0; i < len; i++)
    if (u[i] >= 0x80) {
      size_t n;
      uint32_t c = decode(u + i, len - i, &n);

      return n ? c : u[i];
    }
  return 0;
}
