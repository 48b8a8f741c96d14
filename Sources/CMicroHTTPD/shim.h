#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

// Swift imports no variadic C function; these fixed-arity wrappers call the variadic ones with no extra arguments.
static inline const union MHD_ConnectionInfo *
cmhd_connection_info(struct MHD_Connection *connection, enum MHD_ConnectionInfoType kind) {
    return MHD_get_connection_info(connection, kind);
}
