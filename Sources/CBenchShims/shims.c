#include "CBenchShims.h"
