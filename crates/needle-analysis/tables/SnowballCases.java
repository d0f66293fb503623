import java.io.*;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.core.KeywordTokenizer;
import org.apache.lucene.analysis.snowball.SnowballFilter;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.tartarus.snowball.Among;

/**
 * For snowball_cases.py, on each line of standard input: `suffixes<TAB>Language`
 * prints the endings Lucene's Snowball stemmer of that language knows (the
 * strings of its Among tables, a tab between each); `Language<TAB>word` runs
 * Lucene's SnowballFilter of that language on the word and prints its stem.
 */
public class SnowballCases {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, StandardCharsets.UTF_8);
    KeywordTokenizer tokenizer = new KeywordTokenizer();
    String line;
    while ((line = in.readLine()) != null) {
      String[] parts = line.split("\t", -1);
      if (parts[0].equals("suffixes")) {
        StringBuilder row = new StringBuilder();
        Field text = Among.class.getDeclaredField("s");
        text.setAccessible(true);
        Class<?> stemmer = Class.forName("org.tartarus.snowball.ext." + parts[1] + "Stemmer");
        for (Field f : stemmer.getDeclaredFields()) {
          if (!Modifier.isStatic(f.getModifiers()) || f.getType() != Among[].class) continue;
          f.setAccessible(true);
          for (Among a : (Among[]) f.get(null)) {
            String s = text.get(a) instanceof char[] c ? new String(c) : String.valueOf(text.get(a));
            if (s.isEmpty()) continue;
            if (row.length() > 0) row.append('\t');
            row.append(s);
          }
        }
        out.println(row);
        continue;
      }
      tokenizer.setReader(new StringReader(parts[1]));
      try (TokenStream stream = new SnowballFilter(tokenizer, parts[0])) {
        CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
        stream.reset();
        if (!stream.incrementToken()) throw new IllegalStateException("no token for " + line);
        out.println(term.toString());
        stream.end();
      }
    }
    out.flush();
  }
}
