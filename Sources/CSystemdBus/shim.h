#ifndef LANSESSION_CSYSTEMDBUS_SHIM_H
#define LANSESSION_CSYSTEMDBUS_SHIM_H

#include <systemd/sd-bus.h>
#include <sys/eventfd.h>
#include <poll.h>

#endif
