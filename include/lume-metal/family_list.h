/* lume-metal: the MTLGPUFamily values, as one list that both the host and the guest probe use.
 *
 * Header-only and dependency-free, so the guest probe can include it without a library.
 * LM_FAMILY_LIST(X) calls X(name, value) for every family a capability report carries, in report
 * order. Values are Apple's MTLGPUFamily enum values (reference/metal.md).
 */
#ifndef LUME_METAL_FAMILY_LIST_H
#define LUME_METAL_FAMILY_LIST_H

#define LM_FAMILY_LIST(X) \
	X(Apple1, 1001) X(Apple2, 1002) X(Apple3, 1003) X(Apple4, 1004) X(Apple5, 1005) \
	X(Apple6, 1006) X(Apple7, 1007) X(Apple8, 1008) X(Apple9, 1009) X(Apple10, 1010) \
	X(Mac1, 2001) X(Mac2, 2002) \
	X(Common1, 3001) X(Common2, 3002) X(Common3, 3003) \
	X(Metal3, 5001) X(Metal4, 5002)

#define LM_FAMILY_APPLE_FIRST 1001
#define LM_FAMILY_APPLE_LAST_VALID 1999 /* highest ceiling a profile may set */

#endif
