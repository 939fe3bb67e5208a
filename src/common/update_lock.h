/* The update lock (spec 15.5) between readers and an in-place model update. */
#ifndef ONNXZIP_UPDATE_LOCK_H
#define ONNXZIP_UPDATE_LOCK_H

/* Open file description locks on two bytes far past any real data, so they
 * never meet an application's own locks. Readers hold the lock byte shared
 * while they open; an updater holds it exclusively only around its atomic
 * steps. A gate byte in front, which readers pass through and an updater
 * keeps, stops a stream of readers from starving the updater. type:
 * OZ_LOCK_SHARED (a reader's), OZ_LOCK_EXCLUSIVE (the updater's) or
 * OZ_LOCK_UNLOCK (common/sys.h). */
void oz_update_lock(int fd, int type);

#endif
