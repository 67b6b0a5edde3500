#include "strv.h"

#include <stdlib.h>

void lm_strv_free(char **list)
{
	size_t i;

	if (list == NULL)
		return;
	for (i = 0; list[i] != NULL; i++)
		free(list[i]);
	free(list);
}
