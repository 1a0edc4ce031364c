#ifndef LANSESSION_COPENSSL_SHIM_H
#define LANSESSION_COPENSSL_SHIM_H

#include <openssl/err.h>
#include <openssl/evp.h>

#endif
