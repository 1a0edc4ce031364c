#ifndef LANSESSION_CFILESYSTEM_SHIM_H
#define LANSESSION_CFILESYSTEM_SHIM_H

#include <linux/magic.h>
#include <sys/vfs.h>

#endif
