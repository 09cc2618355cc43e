// glibc's allocator controls (mallopt, malloc_trim), which the Glibc module leaves out.
#include <malloc.h>
