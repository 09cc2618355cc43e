// SPDX-License-Identifier: GPL-3.0-or-later
// The two detectors Debian has, side by side on bench/language/sentences.tsv: CLD2 (libcld2) and
// LibreOffice's libexttextcat, restricted to the five listed languages. Prints one line per row with
// each detector's raw answer, then the time per call. bench/language/compare.py reads the lines.
//
//   g++ -O2 -o /tmp/compare_detectors bench/language/compare_detectors.cpp -lcld2 -lexttextcat-2.0 \
//       -I/usr/include/libexttextcat && /tmp/compare_detectors bench/language/sentences.tsv > /tmp/raw.tsv
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>
#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>
#include <textcat.h>
#include <fingerprint.h>

namespace CLD2 {
const char* LanguageCode(Language lang);
}

struct Row { std::string language, kind, text; };

static std::string cld2(const std::string& text, int variant) {
    CLD2::CLDHints hints = {variant >= 2 ? "fr,en,de,es,it" : nullptr, nullptr, CLD2::UNKNOWN_ENCODING, variant >= 1 ? CLD2::FRENCH : CLD2::UNKNOWN_LANGUAGE};
    CLD2::Language language3[3];
    int percent3[3];
    double score3[3];
    int textBytes = 0;
    bool reliable = false;
    int valid = 0;
    CLD2::ExtDetectLanguageSummaryCheckUTF8(text.data(), (int)text.size(), true, &hints, variant == 3 ? 0 : CLD2::kCLDFlagBestEffort,
        language3, percent3, score3, nullptr, &textBytes, &reliable, &valid);
    std::ostringstream out;
    for (int i = 0; i < 3; i++) out << CLD2::LanguageCode(language3[i]) << ":" << percent3[i] << ":" << (int)score3[i] << ",";
    out << textBytes << "," << (reliable ? 1 : 0);
    return out.str();
}

int main(int argc, char** argv) {
    std::ifstream in(argv[1]);
    std::vector<Row> rows;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> f;
        std::stringstream s(line);
        for (std::string x; std::getline(s, x, '\t');) f.push_back(x);
        rows.push_back({f[0], f[1], f[3]});
    }
    // textcat with the five languages only (its fingerprints, a conf naming them).
    FILE* conf = fopen("/tmp/textcat5.conf", "w");
    for (const char* l : {"fr", "en", "de", "es", "it"}) fprintf(conf, "%s.lm %s\n", l, l);
    fclose(conf);
    void* textcat = special_textcat_Init("/tmp/textcat5.conf", "/usr/share/libexttextcat/");
    if (!textcat) { std::cerr << "textcat_Init failed\n"; return 1; }
    // Each listed language's fingerprint, compared with the text's: a distance for all five.
    std::vector<void*> prints;
    for (const char* l : {"fr", "en", "de", "es", "it"}) {
        void* fp = fp_Init(l);
        fp_SetProperty(fp, TCPROP_UTF8AWARE, 1);
        fp_Read(fp, (std::string("/usr/share/libexttextcat/") + l + ".lm").c_str(), 400);
        prints.push_back(fp);
    }
    auto distances = [&](const std::string& text) {
        std::ostringstream out;
        void* unknown = fp_Init("unknown");
        fp_SetProperty(unknown, TCPROP_UTF8AWARE, 1);
        fp_SetProperty(unknown, TCPROP_MINIMUM_DOCUMENT_SIZE, 1);
        if (fp_Create(unknown, text.data(), text.size(), 400))
            for (void* fp : prints) out << fp_Name(fp) << ":" << fp_Compare(fp, unknown, 0x7fffffff) << ",";
        fp_Done(unknown);
        return out.str();
    };
    for (const Row& row : rows) {
        std::string tc = textcat_Classify(textcat, row.text.data(), row.text.size());
        candidate_t* full = textcat_GetClassifyFullOutput(textcat);
        int count = textcat_ClassifyFull(textcat, row.text.data(), row.text.size(), full);
        std::ostringstream scores;
        for (int i = 0; i < count; i++) scores << full[i].name << ":" << full[i].score << ",";
        textcat_ReleaseClassifyFullOutput(textcat, full);
        std::cout << row.language << "\t" << row.kind;
        for (int v = 0; v < 4; v++) std::cout << "\t" << cld2(row.text, v);
        std::cout << "\t" << tc << "\t" << scores.str() << "\t" << distances(row.text) << "\n";
    }
    using clock = std::chrono::steady_clock;
    for (int which = 0; which < 3; which++) {
        auto start = clock::now();
        int repeat = 5;
        for (int r = 0; r < repeat; r++)
            for (const Row& row : rows) {
                if (which == 0) cld2(row.text, 2);
                else if (which == 1) textcat_Classify(textcat, row.text.data(), row.text.size());
                else distances(row.text);
            }
        double us = std::chrono::duration<double, std::micro>(clock::now() - start).count() / (repeat * rows.size());
        std::cerr << (which == 0 ? "cld2" : which == 1 ? "textcat" : "fingerprints") << " us/text " << us << "\n";
    }
    textcat_Done(textcat);
}
