/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Declared input types (src/filetype.h): the list syntax and the matching
 * rule, against libmagic's answers as they are (MIME type, extensions). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "filetype.h"

static void test_entries(void **state) {
  static const char *const good[] = {
      "application/pdf",
      "image/*",
      ".docx",
      ".tar",
      "text/plain",
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      ".c++",
      "application/x-7z-compressed",
  };
  static const struct {
    const char *entry, *why;
  } bad[] = {
      {"", "1 to 127"},
      {"pdf", "neither"},
      {".", "1 to 32"},
      {".tar.gz", "no inner '.'"},
      {"*/*", "neither"},
      {"application/", "neither"},
      {"/pdf", "neither"},
      {"a/b/c", "neither"},
      {"application/p df", "neither"},
      {"Application/PDF", "lowercase"},
      {".d\x01", "letters"},
      {".abcdefghijklmnopqrstuvwxyzabcdefg", "1 to 32"},
  };
  const char *why;
  (void)state;

  for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
    if (sr_type_entry_check(good[i], &why) != 0)
      fail_msg("'%s' refused: %s", good[i], why);
  for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
    why = NULL;
    assert_int_equal(sr_type_entry_check(bad[i].entry, &why), -EINVAL);
    if (!why || !strstr(why, bad[i].why))
      fail_msg("'%s': '%s' lacks '%s'", bad[i].entry, why ? why : "(null)",
               bad[i].why);
  }
}

static void test_parse(void **state) {
  struct sr_strv l = {0}, untouched = {0};
  char bad[160];
  const char *why;
  (void)state;

  /* Blanks and commas separate; case is folded; duplicates merge. */
  assert_int_equal(sr_type_list_parse("application/PDF  .DOCX,\t.docx, image/*",
                                      &l, &why, bad, sizeof(bad)),
                   0);
  assert_int_equal(l.n, 3);
  assert_string_equal(l.v[0], "application/pdf");
  assert_string_equal(l.v[1], ".docx");
  assert_string_equal(l.v[2], "image/*");
  sr_strv_done(&l);

  assert_int_equal(
      sr_type_list_parse(" , ", &untouched, &why, bad, sizeof(bad)), -EINVAL);
  assert_non_null(strstr(why, "no entry"));
  assert_int_equal(sr_type_list_parse("application/pdf pdf", &untouched, &why,
                                      bad, sizeof(bad)),
                   -EINVAL);
  assert_string_equal(bad, "pdf");
  assert_null(untouched.v);
  {
    /* At most 64 entries. */
    char text[65 * 8];
    size_t used = 0;
    for (int i = 0; i < 65; i++)
      used += (size_t)snprintf(text + used, sizeof(text) - used, ".e%d ", i);
    assert_int_equal(
        sr_type_list_parse(text, &untouched, &why, bad, sizeof(bad)), -EINVAL);
    assert_non_null(strstr(why, "64"));
    text[64 * 5 - 20] = '\0';
    assert_int_equal(sr_type_list_parse(text, &l, &why, bad, sizeof(bad)), 0);
    sr_strv_done(&l);
  }
}

/* What libmagic 5.44 says of a PDF, a DOCX, a JPEG, plain text, a ZIP. */
#define PDF "application/pdf", "pdf"
#define DOCX                                                                   \
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",   \
      "docx"
#define JPEG "image/jpeg", "jpeg/jpg/jpe/jfif"
#define TEXT "text/plain", ""
#define ZIP "application/zip", ""

static void test_accepts(void **state) {
  struct sr_strv l = {0};
  char bad[160];
  const char *why;
  (void)state;

#define LIST(text)                                                             \
  do {                                                                         \
    sr_strv_done(&l);                                                          \
    assert_int_equal(sr_type_list_parse(text, &l, &why, bad, sizeof(bad)), 0); \
  } while (0)

  /* The example: PDF content, or a DOCX named .docx. */
  LIST("application/pdf .docx");
  assert_true(sr_type_list_accepts(&l, "doc.pdf", PDF));
  assert_true(sr_type_list_accepts(&l, "materials/anything", PDF));
  assert_true(sr_type_list_accepts(&l, "r.docx", DOCX));
  assert_true(sr_type_list_accepts(&l, "materials/R.DOCX", DOCX));
  /* A PDF-named text file; a DOCX not named .docx; text named .docx. */
  assert_false(sr_type_list_accepts(&l, "fake.pdf", TEXT));
  assert_false(sr_type_list_accepts(&l, "r.doc", DOCX));
  assert_false(sr_type_list_accepts(&l, "evil.docx", TEXT));
  assert_false(sr_type_list_accepts(&l, "evil.docx", ZIP));
  assert_false(sr_type_list_accepts(&l, "evil.docx", JPEG));

  /* An extension needs the name and the content to agree. */
  LIST(".jpg .pdf");
  assert_true(sr_type_list_accepts(&l, "a.jpg", JPEG));
  assert_true(sr_type_list_accepts(&l, "a.JPG", JPEG));
  assert_false(sr_type_list_accepts(&l, "a.jpeg", JPEG));
  assert_false(sr_type_list_accepts(&l, "a.jpg", PDF));
  assert_false(sr_type_list_accepts(&l, "a.pdf", TEXT));
  assert_false(sr_type_list_accepts(&l, ".pdf", PDF)); /* no extension */
  assert_false(sr_type_list_accepts(&l, "a.", PDF));
  assert_false(sr_type_list_accepts(&l, "pdf/a", PDF));
  assert_true(sr_type_list_accepts(&l, "pdf/a.pdf", PDF));

  /* Text, CSV and ZIP go by MIME type; type/ * takes every subtype. */
  LIST("text/plain image/*");
  assert_true(sr_type_list_accepts(&l, "notes.txt", TEXT));
  assert_true(sr_type_list_accepts(&l, "x.bin", JPEG));
  assert_true(sr_type_list_accepts(&l, "x.png", "image/png", "png"));
  assert_false(sr_type_list_accepts(&l, "x.txt", PDF));
  assert_false(sr_type_list_accepts(&l, "x", "imagex/png", ""));
  assert_false(sr_type_list_accepts(&l, "x", NULL, NULL));
  sr_strv_done(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_entries),
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_accepts),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("filetype", tests, NULL, NULL);
}
