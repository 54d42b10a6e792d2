/* SPDX-License-Identifier: GPL-2.0-or-later */
/* text.c: the ASCII rules agree with libunistring's for every ASCII
 * character, and non-ASCII text goes through the library. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include <unicase.h>
#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>

#include "error.h"
#include "text.h"

/* Python's str.isspace(), as manifest.c did it before text.c. */
static bool lib_isspace(ucs4_t c) {
  int bidi = uc_bidi_class(c);
  return uc_is_general_category(c, UC_CATEGORY_Zs) || bidi == UC_BIDI_WS ||
         bidi == UC_BIDI_B || bidi == UC_BIDI_S;
}

static void test_ascii_rules_match_libunistring(void **state) {
  (void)state;
  for (unsigned c = 0; c < 0x80; c++) {
    uint8_t in = (uint8_t)c, *low, *nf;
    size_t n = 0;

    assert_int_equal(sr_text_ascii_isspace((unsigned char)c), lib_isspace(c));
    assert_int_equal(sr_text_ascii_isalnum((unsigned char)c),
                     uc_is_general_category(c, UC_CATEGORY_L) ||
                         uc_is_general_category(c, UC_CATEGORY_N));
    low = u8_tolower(&in, 1, NULL, NULL, NULL, &n);
    assert_non_null(low);
    assert_int_equal(n, 1);
    assert_int_equal(sr_text_ascii_lower((unsigned char)c), low[0]);
    free(low);
    /* NFKC leaves ASCII alone (text.c copies it). */
    nf = u8_normalize(UNINORM_NFKC, &in, 1, NULL, &n);
    assert_non_null(nf);
    assert_int_equal(n, 1);
    assert_int_equal(nf[0], in);
    free(nf);
  }
}

static void test_ascii(void **state) {
  size_t start, len, n;
  char *s;

  (void)state;
  assert_int_equal(sr_text_prepare(" a-b\t", 5, "x", NULL), 0);
  sr_text_strip(" \x1c a-b\t\n", 8, &start, &len);
  assert_int_equal(start, 3);
  assert_int_equal(len, 3);
  sr_text_strip(" \t ", 3, &start, &len);
  assert_int_equal(len, 0);
  assert_int_equal(sr_text_chars("hello", 5), 5);
  s = sr_text_nfkc("a-b", 3, &n);
  assert_string_equal(s, "a-b");
  assert_int_equal(n, 3);
  free(s);
  assert_int_equal(sr_text_name_chars("pdf-2", 5), SR_TEXT_NAME_OK);
  assert_int_equal(sr_text_name_chars("Pdf", 3), SR_TEXT_NAME_NOT_LOWER);
  assert_int_equal(sr_text_name_chars("a_b", 3), SR_TEXT_NAME_BAD_CHAR);
  /* Upper case is reported before a bad character, as before. */
  assert_int_equal(sr_text_name_chars("A_b", 3), SR_TEXT_NAME_NOT_LOWER);
}

static void test_unicode(void **state) {
  struct sr_error err = {0};
  /* NO-BREAK SPACE + "ｆｏｏ" (fullwidth) + IDEOGRAPHIC SPACE */
  static const char wide[] = "\xc2\xa0\xef\xbd\x86\xef\xbd\x8f\xef\xbd\x8f"
                             "\xe3\x80\x80";
  size_t start, len, n;
  char *s;

  (void)state;
  assert_int_equal(sr_text_prepare(wide, strlen(wide), "x", &err), 0);
  sr_text_strip(wide, strlen(wide), &start, &len);
  assert_int_equal(start, 2);
  assert_int_equal(len, 9);
  assert_int_equal(sr_text_chars(wide, strlen(wide)), 5);
  s = sr_text_nfkc(wide + start, len, &n);
  assert_string_equal(s, "foo");
  free(s);
  assert_int_equal(sr_text_name_chars("caf\xc3\xa9", 5), SR_TEXT_NAME_OK);
  assert_int_equal(sr_text_name_chars("CAF\xc3\x89", 5),
                   SR_TEXT_NAME_NOT_LOWER);
  assert_int_equal(sr_text_name_chars("a\xe2\x80\xa2"
                                      "b",
                                      5),
                   SR_TEXT_NAME_BAD_CHAR); /* U+2022 BULLET */
  assert_true(sr_text_lib_version() > 0);
}

/* Diagnostics quote what callers and skills wrote: nothing of it may act
 * on a terminal, reorder the line or start a line of its own. */
static void test_for_terminal(void **state) {
  char s[] = "a\nb\033[2J\rc\x7f"
             "d\xc2\x9b"
             "31me\xc2\xa0"
             "f\tg\xc2";
  /* A raw CSI byte (an 8-bit terminal's ESC [), RLO, LRI, LINE
   * SEPARATOR; kept: Latin-1 e-acute (not UTF-8, printable), its UTF-8
   * form, ZERO WIDTH JOINER (not a control); of a cut-off E2 80 the E2
   * (the 80 alone is a C1 byte). */
  char t[] = "h\x9b"
             "31mi\xe2\x80\xae"
             "j\xe2\x81\xa6"
             "k\xe2\x80\xa8"
             "l\xe9m\xc3\xa9n\xe2\x80\x8do\xe2\x80";

  (void)state;
  sr_error_for_terminal(s);
  /* One '?' for each control; NBSP (C2 A0) and a cut-off C2 are kept. */
  assert_string_equal(s, "a?b?[2J?c?d?31me\xc2\xa0"
                         "f?g\xc2");
  sr_error_for_terminal(t);
  assert_string_equal(t, "h?31mi?j?k?l\xe9m\xc3\xa9n\xe2\x80\x8do\xe2?");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ascii_rules_match_libunistring),
      cmocka_unit_test(test_ascii),
      cmocka_unit_test(test_unicode),
      cmocka_unit_test(test_for_terminal),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
