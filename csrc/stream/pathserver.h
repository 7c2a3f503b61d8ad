/*
 * pathserver.h -- the path server's public C API is in octonav.h (section "path server"); this header
 * remains so that programs written against it still build.
 */
#ifndef OCTONAV_PATHSERVER_H
#define OCTONAV_PATHSERVER_H

#include "octonav_stream.h"

#endif
