/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <pulse/pulseaudio.h>
#include <pulse/thread-mainloop.h>
