/* The update lock of spec 15.5, taken by readers while they open
 * (read/archive.c) and by the in-place model update (convert/update.c). */
#include <stdint.h>

#include "common/sys.h"
#include "common/update_lock.h"

/* The update lock (spec 15.5): open file description locks on two bytes far
 * past any real end. LOCK_BYTE is held shared by readers while they open and
 * exclusively by the updater around each atomic step. POSIX locks do not
 * favour a waiting writer, so readers opening back to back could hold
 * LOCK_BYTE shared without a gap for ever and starve the updater; GATE_BYTE
 * queues them behind it: a reader takes the gate shared only for as long as
 * it takes to acquire LOCK_BYTE, the updater takes it exclusively before
 * LOCK_BYTE and keeps it until it releases both, so new readers wait at the
 * gate while the ones already in finish. Readers never wait for the gate
 * while holding LOCK_BYTE: no deadlock. */
#define LOCK_BYTE (INT64_MAX - 1)
#define GATE_BYTE (INT64_MAX - 2)

void oz_update_lock(int fd, int type)
{
    switch (type) {
    case OZ_LOCK_SHARED:
        oz_sys_lock_byte(fd, OZ_LOCK_SHARED, GATE_BYTE);
        oz_sys_lock_byte(fd, OZ_LOCK_SHARED, LOCK_BYTE);
        oz_sys_lock_byte(fd, OZ_LOCK_UNLOCK, GATE_BYTE);
        break;
    case OZ_LOCK_EXCLUSIVE:
        oz_sys_lock_byte(fd, OZ_LOCK_EXCLUSIVE, GATE_BYTE);
        oz_sys_lock_byte(fd, OZ_LOCK_EXCLUSIVE, LOCK_BYTE);
        break;
    default:
        oz_sys_lock_byte(fd, OZ_LOCK_UNLOCK, LOCK_BYTE);
        oz_sys_lock_byte(fd, OZ_LOCK_UNLOCK, GATE_BYTE); /* not held by readers: a no-op */
        break;
    }
}
