/* SPDX-License-Identifier: GPL-3.0-or-later */
// glibc's allocator controls (mallopt, malloc_trim), which the Glibc module leaves out.
#include <malloc.h>
