#include "lansession_version.h"

// The tree's release. scripts/package reads it from this line, and builds a package of another version (a snapshot, a
// second build for an upgrade check) by setting LANSESSION_VERSION, which Package.swift defines for this file alone:
// a change of version recompiles this file and relinks, nothing more.
#ifndef LANSESSION_VERSION
#define LANSESSION_VERSION "0.14.0"
#endif

const char *lansession_version(void) { return LANSESSION_VERSION; }
