#ifndef LANSESSION_CBLUETOOTH_SHIM_H
#define LANSESSION_CBLUETOOTH_SHIM_H

#include <sys/socket.h>
#include <poll.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/rfcomm.h>
#include <bluetooth/l2cap.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/sdp.h>
#include <bluetooth/sdp_lib.h>

#endif
