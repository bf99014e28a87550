/* The classic crack the hook detection is for: preload a strcmp that calls
 * everything equal, so a naive `strcmp(key, expected) == 0` check passes. */
int strcmp(const char* a, const char* b) {
  (void)a;
  (void)b;
  return 0;
}
