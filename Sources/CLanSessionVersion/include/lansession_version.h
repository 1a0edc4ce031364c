#ifndef LANSESSION_VERSION_H
#define LANSESSION_VERSION_H

/// The release sessiond and session-client belong to, as `--version` prints it: the tree's own (lansession_version.c),
/// or the version scripts/package builds a package of.
const char *lansession_version(void);

#endif
