/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <espeak-ng/speak_lib.h>
// espeak_ng_InitializePath: where the data is, without loading it (the engine worker names its
// data folder to Landlock before eSpeak reads anything).
#include <espeak-ng/espeak_ng.h>
