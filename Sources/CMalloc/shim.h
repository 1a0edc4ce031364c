#ifndef LANSESSION_CMALLOC_SHIM_H
#define LANSESSION_CMALLOC_SHIM_H

#include <malloc.h>

#endif
