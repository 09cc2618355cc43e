/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef A11Y_CLD2_SHIM_H
#define A11Y_CLD2_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

/* One of CLD2's (at most three) best languages for a text. */
typedef struct {
    /* ISO 639 code, NUL-terminated ("fr", "en", "zh-Hant"); "un" for none. */
    char code[16];
    /* Share of the text's letters in that language, 0...100. */
    int percent;
    /* CLD2's score against what real text in that language scores: about 1000 for real text,
       far below it for a few words or another language's. */
    double normalized_score;
} a11y_cld2_candidate;

typedef struct {
    a11y_cld2_candidate candidates[3];
    /* Letters CLD2 scored (tags, digits and punctuation left out). */
    int text_bytes;
    /* CLD2's own judgement that the first language is clearly ahead. */
    int is_reliable;
} a11y_cld2_result;

/* CLD2's best languages for `length` bytes of UTF-8 plain text, with `hint` (an ISO 639 code, or
   NULL) boosted as the language the text is expected to be in, and a best-effort answer on short
   text. Returns 0 and fills `result`, or -1 when the text is not valid UTF-8 or too long for CLD2's
   int length (`result` then says nothing). Pure computation: no allocation it keeps, no I/O, any
   thread. */
int a11y_cld2_detect(const char *utf8, long length, const char *hint, a11y_cld2_result *result);

#ifdef __cplusplus
}
#endif

#endif
