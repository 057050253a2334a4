/* STUB CLI, replaced soon. */
#include <stdio.h>
#include "wattgraph.h"
int main(void) { printf("wattgraph %s\n", wg_version()); return 0; }
