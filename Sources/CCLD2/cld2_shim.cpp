// SPDX-License-Identifier: GPL-3.0-or-later
// CLD2's C++ API (libcld2-dev) as one C function Swift can call.
#include "cld2_shim.h"

#include <climits>
#include <cstdio>  // compact_lang_det.h uses FILE without including it
#include <cstring>
#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

namespace CLD2 {
// Declared in CLD2's internal lang_script.h, which pulls in generated tables; this is the one
// function needed from it, exported by libcld2.
const char *LanguageCode(Language language);
Language GetLanguageFromName(const char *name);
}

int a11y_cld2_detect(const char *utf8, long length, const char *hint, a11y_cld2_result *result) {
    if (utf8 == nullptr || result == nullptr || length < 0 || length > INT_MAX) return -1;
    std::memset(result, 0, sizeof *result);
    CLD2::CLDHints hints = {nullptr, nullptr, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    if (hint != nullptr) hints.language_hint = CLD2::GetLanguageFromName(hint);
    CLD2::Language language3[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE};
    int percent3[3] = {0, 0, 0};
    double score3[3] = {0, 0, 0};
    int text_bytes = 0;
    bool reliable = false;
    int valid_prefix = 0;
    CLD2::ExtDetectLanguageSummaryCheckUTF8(
        utf8, static_cast<int>(length), true, &hints, CLD2::kCLDFlagBestEffort, language3, percent3, score3,
        nullptr, &text_bytes, &reliable, &valid_prefix);
    if (valid_prefix < length) return -1;
    for (int i = 0; i < 3; i++) {
        const char *code = CLD2::LanguageCode(language3[i]);
        std::strncpy(result->candidates[i].code, code != nullptr ? code : "un", sizeof result->candidates[i].code - 1);
        result->candidates[i].percent = percent3[i];
        result->candidates[i].normalized_score = score3[i];
    }
    result->text_bytes = text_bytes;
    result->is_reliable = reliable ? 1 : 0;
    return 0;
}
