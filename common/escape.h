/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_ESCAPE_H
#define MMHITM_ESCAPE_H

/*
 * Escaping for every string that came from a host (hostnames, comm,
 * kernel strings, symbols): they are attacker-controlled as far as a report
 * reader is concerned. Invalid UTF-8 becomes U+FFFD everywhere.
 */

#include <stddef.h>
#include <stdio.h>

/* HTML text and attribute values (also inside inline SVG): & < > " ' escaped. */
void html_puts(FILE *f, const char *s);
/* A JSON string literal with its quotes; NULL writes null. < > & are \u-escaped too. */
void json_puts(FILE *f, const char *s);
/*
 * A JSON number that round-trips; NaN writes null and an infinity the
 * string "inf" or "-inf" (JSON has no infinity; Python's float() reads
 * these, and null would lose the sign of an unbounded interval).
 */
void json_num(FILE *f, double v);
/* For a terminal: control characters (C0, DEL, C1) and bad UTF-8 become '?'. */
void text_puts(FILE *f, const char *s);
/* The same into buf, truncated to size - 1 bytes on a character boundary. */
void text_safe(char *buf, size_t size, const char *s);

/* Decodes one UTF-8 character at s; returns its length, or 0 when invalid. */
size_t utf8_decode(const unsigned char *s, unsigned int *ret_cp);

#endif
