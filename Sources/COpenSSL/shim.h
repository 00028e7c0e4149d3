#ifndef CLIENTCTL_COPENSSL_SHIM_H
#define CLIENTCTL_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#endif
