/* SPDX-License-Identifier: GPL-3.0-or-later */
/* libexttextcat (libexttextcat-dev): LibreOffice's n-gram language fingerprints. a11yd uses the
   fingerprint calls alone (fp_*): one fingerprint per listed language, compared with a text's. */
#include <libexttextcat/fingerprint.h>
